"""External cross-checks on real data: FunctionChat-Bench (Korean) and BFCL v4 (English).

* :mod:`.sources`: pinned files, mirror location, verified download.
* :mod:`.adapters`: the sets in the project's formats (``ExternalSet``).
* :mod:`.experiment`: route entries and the tool split for catalogs built from
  external sets, and the FunctionChat experiment that the data stage can use
  instead of generated data.
* :mod:`.scoring`: each row scored over its own candidates, request embeddings
  from the encoders' cache.
* :mod:`.gate`: every gate of the registry over each row's own candidates,
  fitted within the set and transferred unchanged from the experiment.
* :mod:`.study`: selection and Jaccard over each row's own candidates;
  ``write_external`` is the workflow entry.
"""
