// Every policy that is not deleted (inactive ones too: simulation may make them active).
MATCH (pol:Policy)
WHERE pol.status <> 'deleted'
RETURN properties(pol) AS props
