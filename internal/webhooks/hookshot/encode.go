package hookshot

import (
	"fmt"
	"net/url"
)

// ContentType is a hook's config.content_type: how the payload is encoded.
type ContentType string

// The content types a hook can have. The platform's default is form.
const (
	ContentJSON ContentType = "json"
	ContentForm ContentType = "form"
)

// Media types sent in the content-type header.
const (
	MediaTypeJSON = "application/json"
	MediaTypeForm = "application/x-www-form-urlencoded"
)

// UnsupportedContentTypeError reports a content type other than json or form.
type UnsupportedContentTypeError struct {
	ContentType ContentType
}

func (e *UnsupportedContentTypeError) Error() string {
	return fmt.Sprintf("unsupported content type %q", string(e.ContentType))
}

// EncodeBody returns the request body for payload (JSON bytes) and the media
// type to send in content-type. json sends payload unchanged; form, and the
// empty content type (the platform's default), send "payload=" followed by
// the URL-encoded payload. Any other content type is an
// *UnsupportedContentTypeError.
func EncodeBody(ct ContentType, payload []byte) (body []byte, mediaType string, err error) {
	switch ct {
	case ContentJSON:
		return payload, MediaTypeJSON, nil
	case ContentForm, "":
		form := url.Values{"payload": {string(payload)}}
		return []byte(form.Encode()), MediaTypeForm, nil
	default:
		return nil, "", &UnsupportedContentTypeError{ContentType: ct}
	}
}
