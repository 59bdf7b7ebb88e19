"""Control-flow ops: `If` and `While` with subgraphs, `tl.cond`, `tl.while_loop`.
"""
