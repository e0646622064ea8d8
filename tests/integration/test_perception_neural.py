"""GroundingDINO, OWLv2 and SAM end to end on tiny models built here, saved to a folder and loaded back offline.

The weights are random, so what is checked is the plumbing a user relies on: loading from a local folder
(once), the processors' pre/post-processing, boxes in image pixels labelled with the asked queries, fusion with
the colour detector and box-prompted masks of the right size.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tf = pytest.importorskip("transformers")

from mallvi.perception.detectors import make_detector  # noqa: E402
from mallvi.perception.neural import loading  # noqa: E402
from mallvi.perception.pipeline import Perception, make_perception  # noqa: E402
from mallvi.perception.synthetic import SynthBox, head_camera, render  # noqa: E402
from mallvi.perception.types import Detection, PerceptionError  # noqa: E402

WORDS = ["red", "green", "blue", "block", "cube", "bowl", "mug", "can", "bottle", "basket", "plate"]


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def _build_grounding_dino(folder: Path) -> None:
    from transformers.models.grounding_dino.image_processing_pil_grounding_dino import (
        GroundingDinoImageProcessorPil,
    )

    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *WORDS])}
    tokenizer = tf.BertTokenizerFast(vocab=vocab)
    processor = tf.GroundingDinoProcessor(
        image_processor=GroundingDinoImageProcessorPil(size={"shortest_edge": 64, "longest_edge": 96}),
        tokenizer=tokenizer,
    )
    config = tf.GroundingDinoConfig(
        backbone_config=tf.SwinConfig(embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=4,
                                      image_size=64, out_features=["stage2", "stage3", "stage4"]),
        text_config=tf.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                  intermediate_size=16, max_position_embeddings=64),
        d_model=32, encoder_layers=1, decoder_layers=2, encoder_ffn_dim=16, decoder_ffn_dim=16,
        encoder_attention_heads=2, decoder_attention_heads=2, num_queries=12, num_feature_levels=3,
        encoder_n_points=2, decoder_n_points=2, max_text_len=32,
    )
    torch.manual_seed(0)
    tf.GroundingDinoForObjectDetection(config).save_pretrained(folder)
    processor.save_pretrained(folder)


def _build_owlv2(folder: Path) -> None:
    from transformers.models.owlv2.image_processing_pil_owlv2 import Owlv2ImageProcessorPil

    chars = list("abcdefghijklmnopqrstuvwxyz")
    vocab: dict[str, int] = {}
    for t in [*chars, *(c + "</w>" for c in chars)]:
        vocab.setdefault(t, len(vocab))
    merges = []
    for w in WORDS:  # byte-pair merges that rebuild each word left to right
        parts = [*w[:-1], w[-1] + "</w>"]
        while len(parts) > 1:
            merges.append((parts[0], parts[1]))
            vocab.setdefault(parts[0] + parts[1], len(vocab))
            parts = [parts[0] + parts[1], *parts[2:]]
    # CLIP's text pooling takes the token with the largest id as end-of-text: the specials come last
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    tokenizer = tf.CLIPTokenizerFast(vocab=vocab, merges=merges, model_max_length=16)
    processor = tf.Owlv2Processor(image_processor=Owlv2ImageProcessorPil(size={"height": 64, "width": 64}),
                                  tokenizer=tokenizer)
    n = len(vocab)
    config = tf.Owlv2Config(
        text_config={"vocab_size": n, "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1,
                     "num_attention_heads": 2, "max_position_embeddings": 16,
                     "bos_token_id": n - 2, "eos_token_id": n - 1, "pad_token_id": n - 1},
        vision_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": 64, "patch_size": 16},
        projection_dim=16,
    )
    torch.manual_seed(0)
    model = tf.Owlv2ForObjectDetection(config)
    with torch.no_grad():  # untrained box regression: start from the patch-grid prior boxes, as OWL training does
        model.box_head.dense2.weight.zero_()
        model.box_head.dense2.bias.zero_()
    model.save_pretrained(folder)
    processor.save_pretrained(folder)


def _build_sam(folder: Path) -> None:
    from transformers.models.sam.image_processing_pil_sam import SamImageProcessorPil

    config = tf.SamConfig(
        vision_config={"hidden_size": 16, "output_channels": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
                       "image_size": 64, "patch_size": 8, "window_size": 4, "global_attn_indexes": [1],
                       "num_pos_feats": 8, "mlp_dim": 32},
        prompt_encoder_config={"hidden_size": 16, "image_size": 64, "patch_size": 8, "mask_input_channels": 4},
        mask_decoder_config={"hidden_size": 16, "mlp_dim": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                             "iou_head_hidden_dim": 16},
    )
    torch.manual_seed(0)
    tf.SamModel(config).save_pretrained(folder)
    image_processor = SamImageProcessorPil(size={"longest_edge": 64}, pad_size={"height": 64, "width": 64},
                                           mask_size={"longest_edge": 16}, mask_pad_size={"height": 16, "width": 16})
    tf.SamProcessor(image_processor=image_processor).save_pretrained(folder)


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tiny_models")
    out = {}
    for name, build in (("grounding_dino", _build_grounding_dino), ("owlv2", _build_owlv2), ("sam", _build_sam)):
        out[name] = root / name
        build(out[name])
    return out


def _obs():  # type: ignore[no-untyped-def]
    K, T = head_camera(320, 180)
    return render([SynthBox("red_block", (-0.1, 0.0, 0.765), (0.05,) * 3, "red"),
                   SynthBox("blue_block", (0.1, 0.05, 0.765), (0.05,) * 3, "blue")], K, T, 320, 180)


def _check(dets: list[Detection], source: str, queries: list[str], w: int, h: int) -> None:
    assert dets, f"{source} returned nothing"
    for d in dets:
        assert d.source == source and 0.0 <= d.score <= 1.0
        x0, y0, x1, y1 = d.box_xyxy
        assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h
        assert d.query in queries
        assert d.label in {"red block", "blue block"}
        assert d.color == d.label.split()[0]


@pytest.mark.parametrize("family", ["grounding_dino", "owlv2"])
def test_open_vocabulary_detector_runs_from_a_local_folder(family: str, models: dict[str, Path]) -> None:
    obs = _obs()
    kw = {"box_threshold": 0.0, "text_threshold": 0.0} if family == "grounding_dino" else {"threshold": 0.0}
    det = make_detector(family, model=str(models[family]), **kw)
    queries = ["the red block", "blue cube"]
    dets = det.detect(obs, queries)
    _check(dets, family, queries, obs.width, obs.height)
    # a second detector on the same folder reuses the loaded model
    again = make_detector(family, model=str(models[family]), **kw)
    assert again.loaded.model is det.loaded.model  # type: ignore[attr-defined]
    assert loading.load_count[(family, str(models[family].resolve()))] == 1


def test_missing_model_folder_is_a_clear_error(tmp_path: Path) -> None:
    empty = tmp_path / "no_model_here"
    empty.mkdir()
    with pytest.raises(PerceptionError, match="cannot load owlv2 model from"):
        make_detector("owlv2", model=str(empty))
    assert os.environ["HF_HUB_OFFLINE"] == "1"


def test_neural_pipeline_with_sam_masks(models: dict[str, Path]) -> None:
    obs = _obs()
    from mallvi.perception.neural.sam import SamSegmenter

    sam = SamSegmenter(model=str(models["sam"]))
    perception = Perception(
        [make_detector("color"), make_detector("owlv2", model=str(models["owlv2"]), threshold=0.0),
         make_detector("grounding_dino", model=str(models["grounding_dino"]), box_threshold=0.0, text_threshold=0.0)],
        sam, min_score=0.0,
    )
    dets = perception.detect(obs, ["red block"])
    assert dets and all(d.source == "fused" for d in dets)
    assert any("color" in d.scores and len(d.scores) >= 1 for d in dets)
    mask = sam.segment(obs, dets[0])
    assert mask is not None and mask.shape == (obs.height, obs.width) and mask.any()
    loc = perception.localize(obs, dets[0])
    assert loc.mask[loc.grasp.v, loc.grasp.u]
    # the factory behind --perception neural wires the same parts, from arguments or the environment
    p = make_perception("neural", owlv2_model=str(models["owlv2"]), sam_model=str(models["sam"]))
    assert [d.name for d in p.detectors] == ["color", "raised", "owlv2"] and p.segmenter.name == "sam"


def test_neural_models_can_come_from_the_environment(models: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MALLVI_GROUNDING_DINO_MODEL", str(models["grounding_dino"]))
    monkeypatch.delenv("MALLVI_OWLV2_MODEL", raising=False)
    monkeypatch.delenv("MALLVI_SAM_MODEL", raising=False)
    p = make_perception("neural")
    assert [d.name for d in p.detectors] == ["color", "raised", "grounding_dino"] and p.segmenter.name == "color"


def test_owlv2_boxes_are_in_pixels_of_the_unpadded_image(models: dict[str, Path]) -> None:
    """OWLv2 predicts boxes relative to the image padded to a square at the bottom/right; on a 320x180 frame a
    box must come out scaled by 320 in both axes (not by 180 vertically) and clipped to the image."""
    obs = _obs()
    det = make_detector("owlv2", model=str(models["owlv2"]), threshold=0.0)
    proc, model = det.loaded.processor, det.loaded.model  # type: ignore[attr-defined]
    inputs = proc(images=obs.rgb, text=[["red block"]], return_tensors="pt", padding="max_length", truncation=True)
    with torch.no_grad():
        out = model(**inputs)
    cx, cy, w, h = out.pred_boxes[0].numpy().T.astype(float)
    side = max(obs.width, obs.height)
    expected = np.stack([(cx - w / 2) * side, (cy - h / 2) * side, (cx + w / 2) * side, (cy + h / 2) * side], 1)
    expected[:, [0, 2]] = expected[:, [0, 2]].clip(0, obs.width)
    expected[:, [1, 3]] = expected[:, [1, 3]].clip(0, obs.height)
    got = det.detect(obs, ["red block"])
    assert got
    for d in got:
        dist = np.abs(expected - np.asarray(d.box_xyxy)).max(axis=1)
        assert dist.min() < 0.5, f"{d.box_xyxy} is not one of the model's boxes"
