"""Reports: a report's lines (titles, blocks, totals, notes, transposed registers) -> one table.

``report_walk`` walks a report's lines as its profile says, ``report_lines`` tells what each line
says besides its rows, ``report_frame`` does the walk as one Polars frame, and ``transpose`` reads
a register printed with one column per employee.
"""
