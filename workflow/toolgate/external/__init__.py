"""External cross-checks on real data: FunctionChat-Bench (Korean) and BFCL v4 (English), each row over its own
candidates; :func:`.study.write_external` is the workflow entry.
"""
