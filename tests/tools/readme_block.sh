#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# readme_block.sh: prints the fenced code block of a Markdown file whose first line is FIRST_LINE (fences left
# out), so that fixtures compile README's examples exactly as README shows them. Exits 1 when there is none.
# Usage: readme_block.sh FILE FIRST_LINE
[ $# -eq 2 ] || { echo "usage: readme_block.sh FILE FIRST_LINE" >&2; exit 2; }
awk -v first="$2" '
    /^```/ { if (inside && found) { done = 1; exit } inside = !inside; starting = inside; next }
    inside && starting { starting = 0; found = ($0 == first) }
    inside && found { print }
    END { exit done ? 0 : 1 }' "$1" || { echo "readme_block.sh: no block starting '$2' in $1" >&2; exit 1; }
