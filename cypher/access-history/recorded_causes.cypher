// Which of these change events already have their access changes stored (by another recorder).
UNWIND $ids AS id
WITH id
WHERE EXISTS { MATCH (:AccessChange {cause_event_id: id}) }
RETURN id
