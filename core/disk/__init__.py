"""Path safety and disk access: caller paths resolved and opened beneath the vault's descriptor, reads, the vault lock.

Modules: paths, reader, safeio, textmap, vaultlock.
"""
