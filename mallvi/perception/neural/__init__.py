"""Neural perception through transformers: model loading with a cache, and SAM segmentation.

torch and transformers are optional dependencies (the ``neural`` extra); they are imported only here and in
the neural detectors, never by the weight-free parts of perception.
"""
