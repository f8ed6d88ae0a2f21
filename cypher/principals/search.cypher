// Principal search: every search, listing and (later) SCIM or policy query runs this one text,
// with the query as data in $q (built by src/principals/search/cypher.ts), so a never-seen combination of
// conditions or sort finds its plan cached like any other. FILTER is filled with the filter of
// principals/search_filter.cypher, the same text everywhere. Every choice a query makes (where
// to start, how to read the page) is a guard on $q in front of a fixed branch; a branch whose
// guard fails does no work. The plan does not depend on statistics (index hints where there is
// a choice), so it is made once and never made again while the data grows.
//
// 1. The total without reading a match, when the query is a listing by type, status and
//    connector source or reference ($q.counted): type label counts from the count store (or the
//    connector source or reference index), less the principals in the statuses left out, each a
//    short scan of its label.
// 2. The matches: the candidates of one anchor ($q.anchor.kind), those passing the filter.
//    Anchors: attribute value nodes by (key, value), the one with the fewest links picked at run
//    time among the equalities and $in lists of the query; the value nodes of one key passing a
//    test (startsWith, contains, endsWith, equality ignoring case, ranges), then their links; id,
//    SCIM user name, connector id, email, name, connector reference or connector source
//    equality; a SCIM user name prefix; a timestamp or score range;
//    type or status labels; else every principal.
//    A counted listing whose page comes from an index scan needs no matches at all.
// 3. The page: when matches are dense along the sort order, an ordered index scan of the sort
//    field (within the query's range on it) stops after skip + limit of them; otherwise the
//    matches are sorted, keeping skip + limit (Top). Ties break on id; missing values last. Its
//    rows are the principals' records, or their ids when $q.ids says so.
CYPHER replan=skip
WITH [clause IN $q.clauses | clause {
  .at,
  terms: [term IN clause.terms | [c IN term | c {
    .*,
    value: CASE WHEN c.temporal THEN datetime(c.value) ELSE c.value END,
    values: CASE WHEN c.temporal THEN [v IN c.values | datetime(v)] ELSE c.values END,
    lower: CASE WHEN c.op IN ['contains', 'startsWith', 'endsWith', 'eqIgnoreCase'] THEN toLower(c.value) END
  }]]
}] AS clauses
OPTIONAL CALL () {
  WITH $q.counted AS counted
  WHERE counted IS NOT NULL
  CALL (counted) {
    WITH counted
    WHERE counted.source IS NULL AND counted.ref IS NULL
    RETURN CASE WHEN 'User' IN counted.types THEN COUNT { (:User) } ELSE 0 END
      + CASE WHEN 'ServiceAccount' IN counted.types THEN COUNT { (:ServiceAccount) } ELSE 0 END
      + CASE WHEN 'ApiKey' IN counted.types THEN COUNT { (:ApiKey) } ELSE 0 END
      + CASE WHEN 'AiAgent' IN counted.types THEN COUNT { (:AiAgent) } ELSE 0 END AS typed
    UNION ALL
    WITH counted
    WHERE counted.source IS NOT NULL
    CALL (counted) {
      MATCH (p:Principal) USING INDEX SEEK p:Principal(connector_source)
      WHERE p.connector_source = counted.source
        AND CASE WHEN size(counted.types) = 4 THEN true ELSE any(l IN labels(p) WHERE l IN counted.types) END
      RETURN count(p) AS typed
    }
    RETURN typed
    UNION ALL
    WITH counted
    WHERE counted.ref IS NOT NULL
    CALL (counted) {
      MATCH (p:Principal) USING INDEX SEEK p:Principal(connector_ref)
      WHERE p.connector_ref = counted.ref
        AND CASE WHEN size(counted.types) = 4 THEN true ELSE any(l IN labels(p) WHERE l IN counted.types) END
      RETURN count(p) AS typed
    }
    RETURN typed
  }
  CALL (counted) {
    UNWIND counted.leftOut AS status
    CALL (status, counted) {
      WITH status, counted
      WHERE status = 'Suspended'
      CALL (counted) {
        MATCH (p:Suspended)
        WHERE any(l IN labels(p) WHERE l IN counted.types)
          AND (counted.source IS NULL OR p.connector_source = counted.source)
          AND (counted.ref IS NULL OR p.connector_ref = counted.ref)
        RETURN count(p) AS n
      }
      RETURN n
      UNION ALL
      WITH status, counted
      WHERE status = 'Deprovisioned'
      CALL (counted) {
        MATCH (p:Deprovisioned)
        WHERE any(l IN labels(p) WHERE l IN counted.types)
          AND (counted.source IS NULL OR p.connector_source = counted.source)
          AND (counted.ref IS NULL OR p.connector_ref = counted.ref)
        RETURN count(p) AS n
      }
      RETURN n
      UNION ALL
      WITH status, counted
      WHERE status = 'Deleted'
      CALL (counted) {
        MATCH (p:Deleted)
        WHERE any(l IN labels(p) WHERE l IN counted.types)
          AND (counted.source IS NULL OR p.connector_source = counted.source)
          AND (counted.ref IS NULL OR p.connector_ref = counted.ref)
        RETURN count(p) AS n
      }
      RETURN n
    }
    RETURN sum(n) AS leftOut
  }
  RETURN typed - leftOut AS counted
}
WITH clauses, counted, COUNT { (:Principal) } AS population
OPTIONAL CALL (clauses, counted, population) {
  WITH clauses, counted, population
  WHERE counted IS NULL OR NOT ($q.sort.ordered AND toFloat($window) * population * $q.sort.spread < counted * counted)
  // Only the chosen anchor's list comes out: the rows the filter reads stay small.
  CALL () {
    // Among the value groups, the one with the fewest links; against it a narrow range, when the
    // query has one, counted in its index alone. The smaller is the anchor.
    OPTIONAL CALL () {
      WITH $q.anchor AS anchor
      WHERE anchor.kind = 'values'
      UNWIND anchor.groups AS grp
      CALL (grp) {
        UNWIND grp.values AS v
        OPTIONAL MATCH (a:Attribute {key: grp.key, value: v}) USING INDEX SEEK a:Attribute(key, value)
        RETURN collect(a) AS nodes, sum(COUNT { (a)<-[:HAS_ATTRIBUTE]-() }) AS links
      }
      RETURN grp, nodes, links
      ORDER BY links ASC
      LIMIT 1
    }
    OPTIONAL CALL (links) {
      WITH $q.anchor.range AS range
      WHERE range IS NOT NULL AND links > 0
      CALL (range) {
        WITH range
        WHERE range.kind = 'created_at'
        RETURN COUNT {
          MATCH (p:Principal) USING INDEX SEEK p:Principal(created_at)
          WHERE p.created_at >= datetime(range.lo) + duration({nanoseconds: range.loOpen})
            AND p.created_at <= datetime(range.hi) - duration({nanoseconds: range.hiOpen})
        } AS n
        UNION ALL
        WITH range
        WHERE range.kind = 'updated_at'
        RETURN COUNT {
          MATCH (p:Principal) USING INDEX SEEK p:Principal(updated_at)
          WHERE p.updated_at >= datetime(range.lo) + duration({nanoseconds: range.loOpen})
            AND p.updated_at <= datetime(range.hi) - duration({nanoseconds: range.hiOpen})
        } AS n
        UNION ALL
        WITH range
        WHERE range.kind = 'last_login'
        RETURN COUNT {
          MATCH (p:Principal) USING INDEX SEEK p:Principal(last_login)
          WHERE p.last_login >= datetime(range.lo) + duration({nanoseconds: range.loOpen})
            AND p.last_login <= datetime(range.hi) - duration({nanoseconds: range.hiOpen})
        } AS n
        UNION ALL
        WITH range
        WHERE range.kind = 'risk_score'
        RETURN COUNT {
          MATCH (p:Principal) USING INDEX SEEK p:Principal(risk_score)
          WHERE p.risk_score >= range.lo + range.loOpen AND p.risk_score <= range.hi - range.hiOpen
        } AS n
      }
      RETURN n AS inRange
    }
    WITH grp, nodes, CASE WHEN inRange < links THEN $q.anchor.range ELSE $q.anchor END AS anchor
    OPTIONAL CALL (anchor, grp, nodes) {
      WITH anchor, grp, nodes
      WHERE anchor.kind = 'values'
      // One value node gives each principal once; several may give an array's owner twice.
      CALL (nodes) {
        WITH nodes
        WHERE size(nodes) = 1
        UNWIND nodes AS a0
        MATCH (p)-[:HAS_ATTRIBUTE]->(a0)
        RETURN collect(p) AS one
      }
      CALL (nodes) {
        WITH nodes
        WHERE size(nodes) > 1
        UNWIND nodes AS a0
        MATCH (p)-[:HAS_ATTRIBUTE]->(a0)
        RETURN collect(DISTINCT p) AS several
      }
      RETURN one + several AS byValues, grp.at AS valueClause
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'key'
      CALL (anchor) {
        MATCH (a0:Attribute) USING INDEX SEEK a0:Attribute(key, value)
        WHERE a0.key = anchor.key AND a0.value IS NOT NULL AND CASE anchor.op
          WHEN 'contains' THEN toLower(a0.value) CONTAINS toLower(anchor.value)
          WHEN 'startsWith' THEN toLower(a0.value) STARTS WITH toLower(anchor.value)
          WHEN 'endsWith' THEN toLower(a0.value) ENDS WITH toLower(anchor.value)
          WHEN 'eqIgnoreCase' THEN toLower(a0.value) = toLower(anchor.value)
          ELSE any(y IN [CASE WHEN anchor.numeric THEN toFloatOrNull(a0.value) ELSE a0.value END] WHERE
            CASE anchor.op
              WHEN 'gt' THEN y > anchor.value
              WHEN 'gte' THEN y >= anchor.value
              WHEN 'lt' THEN y < anchor.value
              ELSE y <= anchor.value
            END)
        END
        // $contains and $eqIgnoreCase are exact here, so the filter skips them: an array matches
        // $contains only through the element equal to the operand (only array links carry
        // `array`); DISTINCT gives each principal once.
        MATCH (p)-[r:HAS_ATTRIBUTE]->(a0)
        WHERE anchor.op <> 'contains' OR r.array IS NULL OR a0.value = anchor.value
        RETURN p
      }
      RETURN collect(DISTINCT p) AS byKey
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'id'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(id)
        WHERE p.id IN anchor.values
        RETURN p
      }
      RETURN collect(p) AS byId
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'user_name'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(user_name)
        WHERE p.user_name IN anchor.values
        RETURN p
      }
      RETURN collect(p) AS byUserName
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'user_name_prefix'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(user_name)
        WHERE p.user_name STARTS WITH anchor.value
        RETURN p
      }
      RETURN collect(p) AS byUserNamePrefix
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'user_name_part'
      CALL (anchor) {
        MATCH (p:Principal)
        WHERE p.user_name CONTAINS anchor.value
        RETURN p
      }
      RETURN collect(p) AS byUserNamePart
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'connector_id'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(connector_id)
        WHERE p.connector_id IN anchor.values
        RETURN p
      }
      RETURN collect(p) AS byConnectorId
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'email'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(email)
        WHERE p.email IN anchor.values
        RETURN p
      }
      RETURN collect(p) AS byEmail
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'name'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(name)
        WHERE p.name IN anchor.values
        RETURN p
      }
      RETURN collect(p) AS byName
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'connector_ref'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(connector_ref)
        WHERE p.connector_ref IN anchor.values
        RETURN p
      }
      RETURN collect(p) AS byRef
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'connector_source'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(connector_source)
        WHERE p.connector_source IN anchor.values
        RETURN p
      }
      RETURN collect(p) AS bySource
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'created_at'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(created_at)
        WHERE p.created_at >= datetime(anchor.lo) + duration({nanoseconds: anchor.loOpen})
          AND p.created_at <= datetime(anchor.hi) - duration({nanoseconds: anchor.hiOpen})
        RETURN p
      }
      RETURN collect(p) AS byCreated
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'updated_at'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(updated_at)
        WHERE p.updated_at >= datetime(anchor.lo) + duration({nanoseconds: anchor.loOpen})
          AND p.updated_at <= datetime(anchor.hi) - duration({nanoseconds: anchor.hiOpen})
        RETURN p
      }
      RETURN collect(p) AS byUpdated
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'last_login'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(last_login)
        WHERE p.last_login >= datetime(anchor.lo) + duration({nanoseconds: anchor.loOpen})
          AND p.last_login <= datetime(anchor.hi) - duration({nanoseconds: anchor.hiOpen})
        RETURN p
      }
      RETURN collect(p) AS byLogin
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'risk_score'
      CALL (anchor) {
        MATCH (p:Principal) USING INDEX SEEK p:Principal(risk_score)
        WHERE p.risk_score >= anchor.lo + anchor.loOpen AND p.risk_score <= anchor.hi - anchor.hiOpen
        RETURN p
      }
      RETURN collect(p) AS byRisk
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'labels' AND 'User' IN anchor.labels
      CALL () {
        MATCH (p:User)
        RETURN p
      }
      RETURN collect(p) AS users
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'labels' AND 'ServiceAccount' IN anchor.labels
      CALL () {
        MATCH (p:ServiceAccount)
        RETURN p
      }
      RETURN collect(p) AS serviceAccounts
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'labels' AND 'ApiKey' IN anchor.labels
      CALL () {
        MATCH (p:ApiKey)
        RETURN p
      }
      RETURN collect(p) AS apiKeys
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'labels' AND 'AiAgent' IN anchor.labels
      CALL () {
        MATCH (p:AiAgent)
        RETURN p
      }
      RETURN collect(p) AS agents
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'labels' AND 'Suspended' IN anchor.labels
      CALL () {
        MATCH (p:Suspended)
        RETURN p
      }
      RETURN collect(p) AS suspended
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'labels' AND 'Deprovisioned' IN anchor.labels
      CALL () {
        MATCH (p:Deprovisioned)
        RETURN p
      }
      RETURN collect(p) AS deprovisioned
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'labels' AND 'Deleted' IN anchor.labels
      CALL () {
        MATCH (p:Deleted)
        RETURN p
      }
      RETURN collect(p) AS deleted
    }
    CALL (anchor) {
      WITH anchor
      WHERE anchor.kind = 'all'
      CALL () {
        MATCH (p:Principal)
        RETURN p
      }
      RETURN collect(p) AS everyone
    }
    RETURN CASE anchor.kind
        WHEN 'values' THEN byValues
        WHEN 'key' THEN byKey
        WHEN 'id' THEN byId
        WHEN 'user_name' THEN byUserName
        WHEN 'connector_id' THEN byConnectorId
        WHEN 'user_name_prefix' THEN byUserNamePrefix
        WHEN 'user_name_part' THEN byUserNamePart
        WHEN 'email' THEN byEmail
        WHEN 'name' THEN byName
        WHEN 'connector_ref' THEN byRef
        WHEN 'connector_source' THEN bySource
        WHEN 'created_at' THEN byCreated
        WHEN 'updated_at' THEN byUpdated
        WHEN 'last_login' THEN byLogin
        WHEN 'risk_score' THEN byRisk
        WHEN 'labels' THEN users + serviceAccounts + apiKeys + agents + suspended + deprovisioned + deleted
        ELSE everyone
      END AS candidates, CASE WHEN valueClause IS NULL THEN anchor.checked ELSE [valueClause] END AS checked
  }
  // The clauses the anchor enforced need no second look at its candidates.
  WITH candidates, [clause IN clauses WHERE NOT clause.at IN checked] AS residual
  CALL (residual, candidates) {
    UNWIND candidates AS p
    WITH p, residual AS clauses
    WHERE true /*FILTER*/
    RETURN collect(p) AS matches
  }
  RETURN matches
}
WITH clauses, matches, coalesce(counted, size(matches)) AS total, population
WITH clauses, matches, total, $q.sort.ordered AND toFloat($window) * population * $q.sort.spread < total * total AS ordered
CALL (clauses, matches, total, ordered) {
  WITH clauses, ordered
  WHERE ordered AND $q.sort.key = 'created_at desc'
  CALL (clauses) {
    MATCH (p:Principal) USING INDEX SEEK p:Principal(created_at)
    WHERE p.created_at >= datetime($q.sort.lo) AND p.created_at <= datetime($q.sort.hi) /*FILTER*/
    WITH p
    ORDER BY p.created_at DESC, p.id DESC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH clauses, ordered
  WHERE ordered AND $q.sort.key = 'created_at asc'
  CALL (clauses) {
    MATCH (p:Principal) USING INDEX SEEK p:Principal(created_at)
    WHERE p.created_at >= datetime($q.sort.lo) AND p.created_at <= datetime($q.sort.hi) /*FILTER*/
    WITH p
    ORDER BY p.created_at ASC, p.id ASC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH clauses, ordered
  WHERE ordered AND $q.sort.key = 'updated_at desc'
  CALL (clauses) {
    MATCH (p:Principal) USING INDEX SEEK p:Principal(updated_at)
    WHERE p.updated_at >= datetime($q.sort.lo) AND p.updated_at <= datetime($q.sort.hi) /*FILTER*/
    WITH p
    ORDER BY p.updated_at DESC, p.id DESC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH clauses, ordered
  WHERE ordered AND $q.sort.key = 'updated_at asc'
  CALL (clauses) {
    MATCH (p:Principal) USING INDEX SEEK p:Principal(updated_at)
    WHERE p.updated_at >= datetime($q.sort.lo) AND p.updated_at <= datetime($q.sort.hi) /*FILTER*/
    WITH p
    ORDER BY p.updated_at ASC, p.id ASC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH clauses, ordered
  WHERE ordered AND $q.sort.key = 'risk_score desc'
  CALL (clauses) {
    MATCH (p:Principal) USING INDEX SEEK p:Principal(risk_score)
    WHERE p.risk_score >= $q.sort.lo AND p.risk_score <= $q.sort.hi /*FILTER*/
    WITH p
    ORDER BY p.risk_score DESC, p.id DESC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH clauses, ordered
  WHERE ordered AND $q.sort.key = 'risk_score asc'
  CALL (clauses) {
    MATCH (p:Principal) USING INDEX SEEK p:Principal(risk_score)
    WHERE p.risk_score >= $q.sort.lo AND p.risk_score <= $q.sort.hi /*FILTER*/
    WITH p
    ORDER BY p.risk_score ASC, p.id ASC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH clauses, ordered
  WHERE ordered AND $q.sort.key = 'name desc'
  CALL (clauses) {
    MATCH (p:Principal) USING INDEX SEEK p:Principal(name)
    WHERE p.name >= $q.sort.lo /*FILTER*/
    WITH p
    ORDER BY p.name DESC, p.id DESC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH clauses, ordered
  WHERE ordered AND $q.sort.key = 'name asc'
  CALL (clauses) {
    MATCH (p:Principal) USING INDEX SEEK p:Principal(name)
    WHERE p.name >= $q.sort.lo /*FILTER*/
    WITH p
    ORDER BY p.name ASC, p.id ASC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH matches, ordered
  WHERE NOT ordered AND $q.sort.desc
  CALL (matches) {
    UNWIND matches AS p
    WITH p, p[$q.sort.field] AS key
    ORDER BY key IS NULL, key DESC, p.id DESC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
  UNION ALL
  WITH matches, ordered
  WHERE NOT ordered AND NOT $q.sort.desc
  CALL (matches) {
    UNWIND matches AS p
    WITH p, p[$q.sort.field] AS key
    ORDER BY key IS NULL, key ASC, p.id ASC
    SKIP $skip
    LIMIT $limit
    RETURN collect(CASE WHEN $q.ids THEN p.id ELSE properties(p) END) AS rows
  }
  RETURN rows
}
RETURN total, rows
