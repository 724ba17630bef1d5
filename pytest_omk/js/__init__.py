"""JavaScript semantics: what the reference implementation's Node runtime decides, reproduced exactly."""
