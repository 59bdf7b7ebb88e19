"""AutoGraph converters: one gast NodeTransformer per Python feature.

The order they run in is `pipeline.CONVERTERS` (see the comments there).
"""
