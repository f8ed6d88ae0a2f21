// Which of these change events already have their access changes stored (by another recorder).
UNWIND $ids AS id
WITH id
WHERE EXISTS { MATCH (:AccessCause {id: id}) }
RETURN id
