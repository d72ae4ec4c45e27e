// args: fact
// What the importance score of `fact` reads besides when it was recorded: the caller's
// importance, its access count and when recall or context last returned it (epoch ms); all
// null for a null `fact`.
{importance: fact.importance, access_count: fact.access_count,
 accessed: fact.last_accessed_at.epochMillis}
