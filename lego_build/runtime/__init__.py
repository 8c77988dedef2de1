"""Runtime helpers every stage uses: atomic artifact writes (:mod:`.atomic`) recorded by the
undo journal (:mod:`.journal`), crash points for the reliability tests (:mod:`.crashtest`),
progress on long stages (:mod:`.progress`), directory locks (:mod:`.lock`) and external
tools (:mod:`.tools`)."""
