# Make ?build the current build of the published graph ?graph (called ?name) in the catalog graph
# ?catalog, and forget the build it pointed to, in one operation: a reader sees one build or the other.
# Triples end in "." and never ";", which Virtuoso's isql takes for the end of a statement.
DELETE { GRAPH ?catalog { ?graph kg:currentBuild ?old . ?old ?p ?o } }
INSERT {
  GRAPH ?catalog {
    ?graph a void:Dataset . ?graph rdfs:label ?name . ?graph kg:currentBuild ?build .
    ?build a void:Dataset . ?build dcterms:created ?created . ?build void:triples ?triples
  }
}
WHERE {
  OPTIONAL { GRAPH ?catalog { ?graph kg:currentBuild ?old . ?old ?p ?o } }
}
