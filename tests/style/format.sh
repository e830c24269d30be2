#!/bin/sh
# SPDX-License-Identifier: MIT
# Formats every C file of the tree in place with clang-format 14 and .clang-format (the `style`
# suite checks this). Hand-laid tables and macros are fenced with clang-format off/on comments.
cd "$(dirname "$0")/../.." || exit 1
git ls-files '*.c' '*.h' | xargs clang-format-14 -i
