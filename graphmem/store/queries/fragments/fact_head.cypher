// The fact recall may show for the :Fact `found`, as `node`: `found` itself when it is
// visible, else the fact that replaced it ({{fact_head_walk}}). No row when there is none.
CALL (found) {
  WITH found AS old
  {{fact_head_walk}}
}
