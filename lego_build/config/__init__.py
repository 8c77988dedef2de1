"""Configuration: the structured-config schemas of every group (:mod:`.schema`) and their
composition from ``conf/`` with Hydra's Compose API (:mod:`.compose`). Parse and validate
only: checks that need a stage's code live in :mod:`lego_build.flow.validate`."""
