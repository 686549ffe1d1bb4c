"""arith: a small Inspect task that runs offline.

The model is Inspect's scripted `mockllm/model`. Its answers come from `scripted_answer`, which
adds and subtracts correctly and gets every product wrong, so the campaign has both verdicts.
Each answer carries its token usage (so Inspect counts no tokens, which would download a
tokenizer) and a cost, so the ledger's spend and estimated cost are real numbers.
"""

import re
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

HERE = Path(__file__).parent
QUESTION = re.compile(r"What is (\d+) ([-+*]) (\d+)\?")


def scripted_answer(input, tools, tool_choice, config) -> ModelOutput:
    """Answer the last user message: right for + and -, off by one for *."""
    text = input[-1].text
    found = QUESTION.search(text)
    if found is None:
        answer = "I do not know."
    else:
        a, op, b = int(found.group(1)), found.group(2), int(found.group(3))
        answer = str(a + b if op == "+" else a - b if op == "-" else a * b + 1)
    output = ModelOutput.from_content(model="mockllm/model", content=answer)
    prompt_tokens = len(text.split())
    output.usage = ModelUsage(
        input_tokens=prompt_tokens,
        output_tokens=1,
        total_tokens=prompt_tokens + 1,
        total_cost=0.002 * (prompt_tokens + 1),
    )
    return output


@task
def arith() -> Task:
    return Task(
        dataset=json_dataset(str(HERE / "arith.jsonl")),
        solver=generate(),
        scorer=match(numeric=True),
        model=get_model("mockllm/model", custom_outputs=scripted_answer),
        message_limit=10,
        token_limit=200,
    )
