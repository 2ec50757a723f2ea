"""The legal parameters (``data/reference/*.yaml``): dated values with a citation each, read
through one strict schema (``schema``) into ``parameters.Parameters``; no legal number lives in
code."""
