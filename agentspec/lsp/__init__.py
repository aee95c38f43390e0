"""`agentspec lsp`: a language server for spec files (pygls, the `lsp` extra).

One module per concern: `symbols` (names defined and used in one file), `cursor` (what a
position in half-typed YAML is about), `schemahelp` (the JSON Schema at a key path),
`analysis` (validate's results per spec, cached by content), `features` (diagnostics,
definition, references, rename, completion, hover), `actions` (quick fixes), `outline`
(document symbols), `positions` (places between agentspec and the protocol), `server`
(the pygls wiring).
"""
