package server

import (
	"encoding/json"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"
)

// The request bodies as documented in /openapi.json. The handlers decode
// bodies field by field (decodeReset, decodeStep: strict, with messages
// that name the field); TestOpenAPIRequestTypesMatchDecoders keeps these
// types and the decoders in step. Responses are documented from the very
// types the handlers encode (resultJSON, stateJSON, Error.JSON's fields).
type (
	resetRequestDoc struct {
		Seed       *int64  `json:"seed,omitempty"`
		EpisodeID  *string `json:"episode_id,omitempty"`
		QuestionID string  `json:"question_id,omitempty"`
		SessionID  string  `json:"session_id,omitempty"`
	}
	actionDoc struct {
		ActionType string         `json:"action_type"`
		Argument   string         `json:"argument"`
		Metadata   map[string]any `json:"metadata,omitempty"`
	}
	stepRequestDoc struct {
		Action    actionDoc `json:"action"`
		TimeoutS  *float64  `json:"timeout_s,omitempty"`
		RequestID string    `json:"request_id,omitempty"`
		SessionID string    `json:"session_id,omitempty"`
	}
	errorDoc struct {
		Code    Code   `json:"code"`
		Message string `json:"message"`
		Detail  any    `json:"detail"`
	}
	healthDoc struct {
		Status string `json:"status"`
	}
)

var (
	openAPIOnce sync.Once
	openAPIJSON []byte
	openAPIErr  error
)

// openAPIDocument is /openapi.json: OpenAPI 3.0 of the HTTP endpoints,
// built with kin-openapi, its schemas generated (openapi3gen) from the Go
// types of the bodies, so that OpenEnv's validator (`openenv validate
// --url`) finds the version and the simulation mode's /reset, /step and
// /state.
func openAPIDocument() ([]byte, error) {
	openAPIOnce.Do(func() {
		schemas := openapi3.Schemas{}
		gen := openapi3gen.NewGenerator(openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true}))
		schema := func(v any) *openapi3.SchemaRef {
			ref, err := gen.NewSchemaRefForValue(v, schemas)
			if err != nil && openAPIErr == nil {
				openAPIErr = err
			}
			return ref
		}
		object := openapi3.NewObjectSchema().NewRef()
		op := func(summary string, body *openapi3.SchemaRef, ok *openapi3.SchemaRef) *openapi3.Operation {
			o := openapi3.NewOperation()
			o.Summary = summary
			if body != nil {
				o.RequestBody = &openapi3.RequestBodyRef{Value: openapi3.NewRequestBody().WithJSONSchemaRef(body)}
			}
			o.AddResponse(http.StatusOK, openapi3.NewResponse().WithDescription(summary).WithJSONSchemaRef(ok))
			o.AddResponse(http.StatusUnprocessableEntity, openapi3.NewResponse().WithDescription("Validation error").WithJSONSchemaRef(schema(errorDoc{})))
			return o
		}
		result := schema(resultJSON{})
		doc := &openapi3.T{
			OpenAPI: "3.0.3",
			Info: &openapi3.Info{Title: Name, Version: Version,
				Description: "sqlenv over OpenEnv's HTTP protocol (simulation mode), with stateful HTTP sessions and MCP at /mcp"},
			Paths: openapi3.NewPaths(),
		}
		doc.Paths.Set("/reset", &openapi3.PathItem{Post: op("Reset the environment (opens a stateful session)", schema(resetRequestDoc{}), result)})
		doc.Paths.Set("/step", &openapi3.PathItem{Post: op("Take a step", schema(stepRequestDoc{}), result)})
		doc.Paths.Set("/state", &openapi3.PathItem{Get: op("The running episode's state", nil, schema(stateJSON{}))})
		doc.Paths.Set("/health", &openapi3.PathItem{Get: op("Health", nil, schema(healthDoc{}))})
		doc.Paths.Set("/schema", &openapi3.PathItem{Get: op("The action, observation and state JSON Schemas", nil, object)})
		doc.Paths.Set("/metadata", &openapi3.PathItem{Get: op("OpenEnv's EnvironmentMetadata", nil, object)})
		doc.Paths.Set("/info", &openapi3.PathItem{Get: op("This server's details", nil, object)})
		doc.Paths.Set("/mcp", &openapi3.PathItem{Post: op("MCP, JSON-RPC 2.0 (GET upgrades to a WebSocket of the same)", object, object)})
		del := openapi3.NewOperation()
		del.Summary = "End a stateful HTTP session"
		del.Parameters = openapi3.Parameters{{Value: openapi3.NewPathParameter("id").WithSchema(openapi3.NewStringSchema())}}
		del.AddResponse(http.StatusNoContent, openapi3.NewResponse().WithDescription("Closed"))
		doc.Paths.Set("/sessions/{id}", &openapi3.PathItem{Delete: del})
		doc.Components = &openapi3.Components{Schemas: schemas}
		if openAPIErr == nil {
			openAPIJSON, openAPIErr = json.Marshal(doc)
		}
	})
	return openAPIJSON, openAPIErr
}
