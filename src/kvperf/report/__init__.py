"""Reports: the terminal table and progress (later: markdown, HTML, graphs)."""
