package walls

// ONoFollow: Windows has no sandbox backend, and no O_NOFOLLOW.
const ONoFollow = 0
