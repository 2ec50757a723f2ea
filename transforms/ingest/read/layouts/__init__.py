"""Layouts: the profiles as data, and how a header's cells reach the canonical fields.

Where profiles come from (``profile_files``: the shipped ``data/vendors/`` and the agency's own
folder), what a profile may say (``profiles``, ``profile_parts``, ``profile_keys`` for the keys a
header of aliases cannot say, ``report_layout`` for a report's lines, ``columns`` for columns cut
or named other ways), the header vocabulary (``vocabulary``) and which row is the header and which
column reaches which field (``header``).
"""
