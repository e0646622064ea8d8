"""Run traces (schema, writer, reader, graph capture) and the Dash trace viewer."""
