"""The FU language of seed 004 §6.3: number formats, typed signals, user-defined FUs."""
