package main

import (
	"testing"
)

const mgmtPkg = "github.com/cmsplatform/cms/proto/gen/go/cms/management/v1"

// TestFix: int64 schemas and parameters become integers, emit_null fields
// x-nullable, x-go-type goes, and everything else keeps its order and form.
func TestFix(t *testing.T) {
	nullable, err := nullableFields()
	if err != nil {
		t.Fatal(err)
	}
	if got := nullable[goType{mgmtPkg, "CmsCommentList"}]; len(got) != 1 || got[0] != "continue" {
		t.Fatalf("CmsCommentList emit_null fields = %v", got)
	}
	if _, ok := nullable[goType{mgmtPkg, "CmsComment"}]; ok {
		t.Fatal("CmsComment has no emit_null field")
	}
	in := `{
  "swagger": "2.0",
  "paths": {
    "/c/{id}": {
      "get": {
        "parameters": [
          {
            "name": "id",
            "in": "path",
            "type": "string",
            "format": "int64"
          }
        ]
      }
    }
  },
  "definitions": {
    "v1CmsCommentList": {
      "type": "object",
      "properties": {
        "continue": {
          "type": "string",
          "description": "<next>"
        },
        "count": {
          "type": "integer",
          "format": "int32"
        }
      },
      "x-go-type": {
        "import": {
          "package": "` + mgmtPkg + `"
        },
        "type": "CmsCommentList"
      }
    },
    "v1CmsComment": {
      "type": "object",
      "properties": {
        "id": {
          "type": "string",
          "format": "int64"
        },
        "body": {
          "type": "string"
        }
      },
      "x-go-type": {
        "import": {
          "package": "` + mgmtPkg + `"
        },
        "type": "CmsComment"
      }
    }
  }
}
`
	want := `{
  "swagger": "2.0",
  "paths": {
    "/c/{id}": {
      "get": {
        "parameters": [
          {
            "name": "id",
            "in": "path",
            "type": "integer",
            "format": "int64"
          }
        ]
      }
    }
  },
  "definitions": {
    "v1CmsCommentList": {
      "type": "object",
      "properties": {
        "continue": {
          "type": "string",
          "description": "\u003cnext\u003e",
          "x-nullable": true
        },
        "count": {
          "type": "integer",
          "format": "int32"
        }
      }
    },
    "v1CmsComment": {
      "type": "object",
      "properties": {
        "id": {
          "type": "integer",
          "format": "int64"
        },
        "body": {
          "type": "string"
        }
      }
    }
  }
}
`
	out, err := fix([]byte(in), nullable)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != want {
		t.Errorf("fix =\n%s\nwant\n%s", out, want)
	}
	if _, err := fix([]byte(`{"a":1,"a":2}`), nullable); err == nil {
		t.Error("a duplicate member was accepted")
	}
}

// TestRetryAfterOn429: every 429 answer declares Retry-After; one that
// declares it already is kept, other answers are untouched.
func TestRetryAfterOn429(t *testing.T) {
	in := `{"paths":{"/a":{"get":{"responses":{"200":{"description":"ok"},"429":{"description":"busy"}}},` +
		`"post":{"responses":{"429":{"description":"own","headers":{"Retry-After":{"type":"string"}}}}}}}}`
	want := `{
  "paths": {
    "/a": {
      "get": {
        "responses": {
          "200": {
            "description": "ok"
          },
          "429": {
            "description": "busy",
            "headers": {
              "Retry-After": {
                "description": "Seconds to wait before retrying.",
                "type": "integer"
              }
            }
          }
        }
      },
      "post": {
        "responses": {
          "429": {
            "description": "own",
            "headers": {
              "Retry-After": {
                "type": "string"
              }
            }
          }
        }
      }
    }
  }
}
`
	out, err := fix([]byte(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != want {
		t.Errorf("fix =\n%s\nwant\n%s", out, want)
	}
}
