"""The report stage: paper values beside ours, the claims ledger, the headline check and the figures."""
