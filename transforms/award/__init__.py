"""Awards against the annual cap (N.J.S.A. 34:11-56a40 g; spec section 7): ``decide`` (which
applications get what), ``allocation`` (first come first served or pro rata), ``ledger`` (the
DuckDB record of every decision, amendment and run) and ``changes`` (what changed since the last
run)."""
