// The filter of principal search (src/principals/search/cypher.ts): whether principal `p` matches the query
// in $q, given `clauses` (the query's normal form, instants already turned into datetimes, less
// any clause the anchor that found `p` already enforced). The text between the BEGIN and END
// markers is inserted wherever principals/search.cypher says FILTER; the rest only makes this
// file a statement of its own, so that the catalogue's EXPLAIN check covers the filter.
//
// The query arrives as data, so this text, and with it the plan, is the same for every search.
// Type and status are label sets tested first: "not deleted", the default, and a single type are
// tested as fixed labels, about twice as fast as looking through labels(p).
// Then every clause must hold: some term of it all of whose literals hold. A literal
// {op, prop, value, values, lower, scalar, numeric, neg} reads property `prop` (a fixed property
// name or `attr.<key>`, passed as a value); a field holds one value, an attribute a string or a
// list, and a list holds when any element does. A missing property gives null, which coalesce
// turns into false before `neg` flips it, so every literal is true or false, never null.
// CASE, not AND or OR, fixes what is evaluated first: the planner may reorder their operands.
// Every test is named (the tests of src/operators/table.ts): a test named nowhere is null, so
// false, never another test's meaning.
MATCH (p:Principal)
WITH p, $clauses AS clauses
WHERE /*BEGIN*/CASE
  WHEN NOT CASE $q.type
    WHEN 'User' THEN p:User
    WHEN 'ServiceAccount' THEN p:ServiceAccount
    WHEN 'ApiKey' THEN p:ApiKey
    WHEN 'AiAgent' THEN p:AiAgent
    ELSE CASE WHEN $q.allTypes THEN true ELSE any(l IN labels(p) WHERE l IN $q.types) END
  END THEN false
  WHEN NOT CASE WHEN $q.notDeleted THEN NOT p:Deleted ELSE any(l IN labels(p) WHERE l IN $q.statuses) END THEN false
  ELSE all(clause IN clauses WHERE any(term IN clause.terms WHERE all(c IN term WHERE c.neg <> coalesce(CASE
      WHEN c.op = 'labels' THEN any(l IN labels(p) WHERE l IN c.values)
      WHEN c.op = 'exists' THEN p[c.prop] IS NOT NULL
      WHEN c.scalar THEN any(x IN [CASE WHEN c.numeric THEN toFloatOrNull(p[c.prop]) ELSE p[c.prop] END] WHERE
        CASE c.op
          WHEN 'eq' THEN x = c.value
          WHEN 'in' THEN x IN c.values
          WHEN 'gte' THEN x >= c.value
          WHEN 'lt' THEN x < c.value
          WHEN 'gt' THEN x > c.value
          WHEN 'lte' THEN x <= c.value
          WHEN 'contains' THEN toLower(x) CONTAINS c.lower
          WHEN 'startsWith' THEN toLower(x) STARTS WITH c.lower
          WHEN 'eqIgnoreCase' THEN toLower(x) = c.lower
          WHEN 'endsWith' THEN toLower(x) ENDS WITH c.lower
        END)
      ELSE any(x IN [p[c.prop]] WHERE CASE c.op
        WHEN 'eq' THEN CASE WHEN x IS :: LIST<ANY> THEN c.value IN x ELSE x = c.value END
        WHEN 'in' THEN CASE WHEN x IS :: LIST<ANY> THEN any(e IN x WHERE e IN c.values) ELSE x IN c.values END
        WHEN 'contains' THEN CASE WHEN x IS :: LIST<ANY> THEN c.value IN x ELSE toLower(x) CONTAINS c.lower END
        ELSE any(e IN CASE WHEN x IS :: LIST<ANY> THEN x ELSE [x] END WHERE
          any(y IN [CASE WHEN c.numeric THEN toFloatOrNull(e) ELSE e END] WHERE CASE c.op
            WHEN 'startsWith' THEN toLower(y) STARTS WITH c.lower
            WHEN 'endsWith' THEN toLower(y) ENDS WITH c.lower
            WHEN 'eqIgnoreCase' THEN toLower(y) = c.lower
            WHEN 'gt' THEN y > c.value
            WHEN 'gte' THEN y >= c.value
            WHEN 'lt' THEN y < c.value
            WHEN 'lte' THEN y <= c.value
          END))
      END)
    END, false))))
END/*END*/
RETURN p.id AS id
