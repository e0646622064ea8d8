"""The MALLVi agent graph: state, runtime context, nodes, routing and backends."""
