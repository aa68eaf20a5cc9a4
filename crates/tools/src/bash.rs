//! Bash command analysis (tree-sitter-bash): read / search / list / other, read-only verdicts.
