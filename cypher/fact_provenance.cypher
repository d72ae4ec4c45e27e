// name: fact_provenance
// mode: read
// params: ns: string, fact_id: string
// returns: episode_id, kind, external_id, session_id, role, speaker, occurred_at, recorded_at, content, derived_at, actor, carried_from
// example: {"ns": "demo", "fact_id": "00000000-0000-0000-0000-000000000000"}
// Where the fact $fact_id came from: the messages (:Episode) it was extracted from, through its
// DERIVED_FROM edges, in the order they were sent: the caller's message id (external_id),
// session, role, speaker, when it was sent (occurred_at) and stored (recorded_at), its
// verbatim content, and when and by whom the edge was made (derived_at, actor: 'extractor',
// or a consolidation run that carried it from a merged duplicate, carried_from). A message
// erased by forget shows as kind 'forgotten' with its id and occurred_at only (no content,
// external id or session). No rows for a fact stated directly (remember), for an erased
// fact, or for an id that names no fact of the namespace.
MATCH (f:Fact {ns: $ns, id: $fact_id})-[d:DERIVED_FROM]->(e:Episode|Tombstone {ns: $ns})
RETURN coalesce(e.id, e.episode_id) AS episode_id,
       CASE WHEN e:Episode THEN 'episode' ELSE 'forgotten' END AS kind,
       e.external_id AS external_id, e.session_id AS session_id, e.role AS role,
       e.speaker AS speaker, e.occurred_at AS occurred_at, e.recorded_at AS recorded_at,
       e.content AS content, d.at AS derived_at, d.actor AS actor,
       d.carried_from AS carried_from
ORDER BY coalesce(occurred_at, recorded_at), episode_id
