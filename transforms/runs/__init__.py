"""The runs an analyst starts, as plain steps the Prefect flows wire: ``annual`` (decide and
award), ``quarterly`` (estimates, spec section 9), ``whatif`` (other settings, never the ledger),
over the inputs of ``inputs`` and the record of ``record``."""
