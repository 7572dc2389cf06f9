"""11 nimmt! at the table: the cog and its panel (``cog``), the pictures (``render``)."""
