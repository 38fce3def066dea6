"""Prompts as modules: each pairs the prompt text with a Pydantic schema of the expected answer.

The input section of every prompt is a task block (providers.offline.render_task_block), so
the offline provider answers the same prompts with rules.
"""
