"""A minimal bot used to check the subprocess launcher:

    python -m tests.fakediscord.launch tests.fakediscord.demo_bot:main
"""
from __future__ import annotations

import os

import discord
from discord import app_commands


class _Again(discord.ui.View):
    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(label="Again", custom_id="demo:again")
    async def again(self, interaction: discord.Interaction, button: discord.ui.Button) -> None:
        await interaction.response.edit_message(content="pong again", view=None)


class DemoClient(discord.Client):
    def __init__(self) -> None:
        super().__init__(intents=discord.Intents.default())
        self.tree = app_commands.CommandTree(self)

        @self.tree.command(name="ping", description="Ping the demo bot")
        async def ping(interaction: discord.Interaction, text: str) -> None:
            await interaction.response.send_message(f"pong: {text}", view=_Again())

    async def setup_hook(self) -> None:
        self.add_view(_Again())
        await self.tree.sync()


def main() -> None:
    DemoClient().run(os.environ.get("FAKEDISCORD_TOKEN", "fake-token"), log_handler=None)
