"""Reports: the terminal tables and progress line, markdown (PR comments), the self-contained
HTML pages (results, history) with their SVG charts, matplotlib graphs, and the pages of
comparisons, bisect, gates, memory, profiles, sweeps, definitions, scenarios, doctor and track.
Each renders a model it is given; none measures or reads the store."""
