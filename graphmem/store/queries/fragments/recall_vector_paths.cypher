// Recall's vector reads, each kind's from the one path its branch took (the others read
// nothing; $filtered: the statement reads through SEARCH, not the whole index): fv_* and ev_*
// as recall_search_rest reads them, and the path each kind took (fact_path, episode_path:
// 'exact', 'filtered' or 'unfiltered'; null for a kind not searched).
WITH *,
     fe_fetched + fx_fetched AS fv_fetched, fe_found + fx_found AS fv_found,
     ee_fetched + ex_fetched AS ev_fetched, ee + ex AS ev,
     CASE WHEN NOT has_facts OR NOT $use_vector THEN null
          WHEN fact_count <= $fact_cap THEN 'exact'
          WHEN $filtered THEN 'filtered' ELSE 'unfiltered' END AS fact_path,
     CASE WHEN NOT has_episodes OR NOT $use_vector THEN null
          WHEN episode_count <= $episode_cap THEN 'exact'
          WHEN $filtered THEN 'filtered' ELSE 'unfiltered' END AS episode_path
