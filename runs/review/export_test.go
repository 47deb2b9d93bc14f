package review

// PRQueryForTest is the review query, for its validation against GitHub's schema.
const PRQueryForTest = prQuery
