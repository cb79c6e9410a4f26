"""The benchmark's executors: where and when cells run (this machine's GPU slots or Slurm jobs),
never how a cell is prepared or judged.

- :mod:`.local`: a pool of workers on this machine, with GPU slots, concurrency and resumption;
- :mod:`.slurm`: the cells as Slurm job arrays through submitit, with the same contract;
- :mod:`.state`: the state directory both keep, so a benchmark started by one resumes on the
  other.

Nothing is re-exported here: import from the module that holds a name.
"""
