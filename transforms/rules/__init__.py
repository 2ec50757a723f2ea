"""The credit rules of N.J.S.A. 34:11-56a40, one module per step of the spec (sections 3 to 7 and
9), each opening with the statute paragraph it implements; ``engine.compute_credits`` composes
them. Pure functions over Polars frames."""
