package repository_test

import "forgeapi/internal/apptest"

var ctx = apptest.Ctx()
