"""``rra build RAW_REPO``: the whole builder workflow as steps, with checkpoints; one module a step.

Steps, in order (:data:`STEPS`), each in the module of its name:

- **specify**: clone ``RAW_REPO`` into the artifact directory (unless the build is in place) and
  draft the manifest (:func:`rra_tools.builder.draft.draft_manifest`);
- **fill**: ask for every ``TODO`` value of the manifest (a *placeholder* decision each);
- **claims**: ask, for every candidate claim the draft found, whether it is a claim (a *claim*
  decision each): a claim the draft wrote with TODOs is confirmed by filling them in, or removed;
- **lock**: write the PEP 751 lock (:func:`rra_tools.env.resolve.lock_from_requirements`); a
  lock that does not resolve is a *repair* decision; ``skip_lock`` skips it with a reason;
- **execute**: run every launcher once through :func:`rra_tools.run.run_plans`; a launcher that
  fails is a *repair* decision, and the repair (files written) becomes a change record
  (:func:`rra_tools.builder.changes.record_change`); then it runs again;
- **preserve**: prove the patch series (:func:`rra_tools.builder.changes.verify_series`); code
  changed without a change record is a *rationale* decision;
- **reference**: run each claim's launcher ``reference_runs`` times (a stochastic one: each of
  its seeds) and add the runs as reference observations (:func:`rra_tools.builder.reference.add_references`),
  by ``"rra build"``, from the refined code, on this machine;
- **guide**: write the reproduction guide (:func:`rra_tools.builder.guide.write_guide`);
- **review**: the independent review (:func:`rra_tools.builder.review.artifact.review_artifact`): every
  launcher re-run from a clean shell in a fresh copy; the build fails when the review does not pass.

Checkpoints: the state file ``.rra/build/state.json`` of the artifact records, for every step,
its status, the digest of its inputs as they were when it finished, its wall time and the
tokens and cost the agent reported. A re-run skips every finished step whose inputs have the
same digest, up to the first one that must run; from there on every step runs. The build stops
at a decision nobody answered (:class:`~rra_tools.builder.agent.DecisionNeeded`) with the state
saved, so running it again resumes there.
"""

from .errors import BuildError, BuildInputError
from .options import BuildOptions, Progress
from .state import STATE_PATH, STEPS, BuildResult, StepRecord, read_state
from .steps import build

__all__ = ["STATE_PATH", "STEPS", "BuildError", "BuildInputError", "BuildOptions", "BuildResult", "Progress", "StepRecord",
           "build", "read_state"]
