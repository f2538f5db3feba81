"""Scans spread over many processes or machines: assertree on an existing distributed engine.

- `worker`: what a worker runs on its share of the resources (one `Scanner`, one record per resource);
- `records`: what a worker sends back for each resource it checked (plain data, no policy objects), and how
  the process that holds the policies turns those records into the `ScanResult` the reporters read;
- `dask`: scans over a Dask bag or dataframe of resources (``pip install 'assertree[dask]'``; Dask is
  imported when that module is).

Compiled policies of every language pickle as their documents and are compiled once in each worker process
(`assertree.languages.base.reduce_compiled`), so any engine that pickles its tasks can ship them.
"""
