#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# js_to_c.sh FILE: print FILE as the lines of a C string literal, for embedding scripts in the binary.
set -e
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$/\\n"/' "$1"
