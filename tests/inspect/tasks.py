"""Inspect tasks for git-ledger's integration tests (tests/cli/inspect_runs.rs).

Every task runs offline on Inspect's scripted `mockllm/model`: the model repeats the word after
"Say:" in the last user message, with its token usage and cost set (so Inspect counts no
tokens, which would download a tokenizer). Sample "a" passes, "b" fails (its target is another
word), sample 7 (an integer id) passes. Each task exercises one way Inspect ends a sample.
"""

import os

import anyio
import re

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Target, accuracy, includes, scorer
from inspect_ai.solver import Generate, TaskState, generate, solver

DATASET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "samples.jsonl")
WORD = re.compile(r"Say: (\w+)")

# Tries of each (sample id, epoch) in this process, for the solver that fails only once.
TRIES: dict[tuple[str, int], int] = {}


def echo(input, tools, tool_choice, config) -> ModelOutput:
    """Repeat the word after "Say:"; 3 input tokens, 1 output token, $0.002 a call."""
    found = WORD.search(input[-1].text)
    output = ModelOutput.from_content(
        model="mockllm/model", content=found.group(1) if found else "what?"
    )
    output.usage = ModelUsage(
        input_tokens=3, output_tokens=1, total_tokens=4, total_cost=0.002
    )
    return output


def scripted():
    return get_model("mockllm/model", custom_outputs=echo)


def make(solvers, **kwargs) -> Task:
    return Task(
        dataset=json_dataset(DATASET),
        solver=solvers,
        scorer=includes(),
        model=scripted(),
        **kwargs,
    )


@solver
def raise_on(sample_id: str, only_first_try: bool = False, env: str | None = None):
    """Raise for one sample: always, on its first try only, or while `env` is set."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        key = (str(state.sample_id), state.epoch)
        TRIES[key] = TRIES.get(key, 0) + 1
        failing = str(state.sample_id) == sample_id
        if only_first_try:
            failing = failing and TRIES[key] == 1
        if env is not None:
            failing = failing and bool(os.environ.get(env))
        if failing:
            raise RuntimeError(f"scripted failure of sample {sample_id}\nsecond line")
        return await generate(state)

    return solve


@solver
def keep_asking():
    """Generate, then ask again, until a limit ends the sample."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for _ in range(50):
            state = await generate(state)
            state.messages.append(ChatMessageUser(content=state.input_text))
        return state

    return solve


@task
def echo_task() -> Task:
    """Passing and failing samples."""
    return make(generate())


@task
def raises() -> Task:
    """Sample "b" raises on every try."""
    return make(raise_on("b"))


@task
def raises_once() -> Task:
    """Sample "b" raises on its first try only (run with --retry-on-error)."""
    return make(raise_on("b", only_first_try=True))


@task
def flaky() -> Task:
    """Sample "b" raises while FLAKY_FAIL is set (run, then eval-retry without it)."""
    return make(raise_on("b", env="FLAKY_FAIL"))


@task
def limited() -> Task:
    """Every sample asks until its message limit (declared: 4) fires."""
    return make(keep_asking(), message_limit=4)


@solver
def stall_on(sample_id: str, env: str):
    """While `env` is set, wait an hour in sample `sample_id`, so that the run can be stopped."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if str(state.sample_id) == sample_id and os.environ.get(env):
            await anyio.sleep(3600)
        return await generate(state)

    return solve


@task
def stalls() -> Task:
    """While STALL is set, sample "b" never finishes: the run is interrupted or killed."""
    return make(stall_on("b", env="STALL"))


@scorer(metrics=[accuracy()])
def nan_for_b():
    """`includes`, except that sample "b" is unscored (NaN, Inspect's unscored sentinel)."""
    inner = includes()

    async def score(state: TaskState, target: Target) -> Score:
        if str(state.sample_id) == "b":
            return Score(value=float("nan"), explanation="not gradable")
        return await inner(state, target)

    return score


@task
def unscored() -> Task:
    """Sample "b" gets a NaN score from the declared scorer."""
    return Task(
        dataset=json_dataset(DATASET),
        solver=generate(),
        scorer=nan_for_b(),
        model=scripted(),
    )


def unpriced(input, tools, tool_choice, config) -> ModelOutput:
    """A second scripted model that reports tokens but no cost."""
    output = ModelOutput.from_content(model="mockllm/unpriced", content="noted")
    output.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)
    return output


@solver
def ask_unpriced_too(sample_id: str):
    """For one sample, also call a model that reports no cost, then generate as usual."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if str(state.sample_id) == sample_id:
            other = get_model("mockllm/unpriced", custom_outputs=unpriced)
            await other.generate(state.input_text)
        return await generate(state)

    return solve


@task
def partly_priced() -> Task:
    """Sample "a" uses two models, one of them unpriced: its cost is unknown."""
    return make(ask_unpriced_too("a"))


def _samples(*ids):
    from inspect_ai.dataset import MemoryDataset, Sample

    return MemoryDataset(
        [Sample(input=f"Say: w{i}", target=f"w{i}", id=sid) for i, sid in enumerate(ids)]
    )


@task
def repeated_ids() -> Task:
    """A dataset whose sample id "a" occurs twice: no draft can be generated from it."""
    return Task(dataset=_samples("a", "b", "a"), solver=generate(), scorer=includes(), model=scripted(), message_limit=10)


@task
def missing_ids() -> Task:
    """A dataset whose second sample has no id: Inspect would number it by position."""
    return Task(dataset=_samples("a", None), solver=generate(), scorer=includes(), model=scripted(), message_limit=10)


@scorer(metrics={"found": [accuracy()], "short": [accuracy()]})
def two_keys():
    """A value per key, as inspect_evals' agent_threat_bench_scorer gives (utility, security)."""

    async def score(state: TaskState, target: Target) -> Score:
        text = state.output.completion
        return Score(
            value={"found": "C" if target.text in text else "I", "short": "C" if len(text) < 10 else "I"}
        )

    return score


@task
def keyed() -> Task:
    """Its first scorer gives a dictionary (no declared pass value can equal it); `includes`
    second."""
    return Task(dataset=json_dataset(DATASET), solver=generate(), scorer=[two_keys(), includes()], model=scripted(), message_limit=10)


@task
def modelless() -> Task:
    """A task that sets no model: the run's --model decides (readiness only; never run)."""
    return Task(dataset=json_dataset(DATASET), solver=generate(), scorer=includes(), message_limit=10)
