"""`ledger_demo/spell`: the dataset ships inside the package (data/words.jsonl), and task
arguments choose the samples (`level`) and change the prompt (`shout`), as inspect_evals tasks
do. The model is Inspect's scripted mockllm repeating the word after "Say:": "easy-1" and
"hard-1" pass, "hard-2" fails (its target is another word)."""

import json
import os
import re

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import includes
from inspect_ai.solver import generate

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "words.jsonl")
WORD = re.compile(r"Say: (\w+)", re.IGNORECASE)


def echo(input, tools, tool_choice, config) -> ModelOutput:
    found = WORD.search(input[-1].text)
    output = ModelOutput.from_content(
        model="mockllm/model", content=found.group(1).lower() if found else "what?"
    )
    output.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4, total_cost=0.001)
    return output


@task
def spell(level: str = "easy", shout: bool = False) -> Task:
    with open(DATA, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    samples = [
        Sample(
            id=r["id"],
            input=r["input"].upper() if shout else r["input"],
            target=r["target"],
        )
        for r in rows
        if r["level"] == level
    ]
    return Task(
        dataset=MemoryDataset(samples, name=f"words-{level}"),
        solver=generate(),
        scorer=includes(),
        model=get_model("mockllm/model", custom_outputs=echo),
        message_limit=10,
    )
