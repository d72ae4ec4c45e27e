// name: reembed_release
// mode: write
// params: key, token
// returns: released
// A run that stops before the end gives its claim up, so that the next run resumes at once
// instead of waiting for the lease to run out (the re-embedding itself stays marked).
MATCH (s:GraphmemSchema {key: $key})
WHERE s.reembedding_token = $token
SET s.reembedding_heartbeat = null
RETURN count(s) AS released
