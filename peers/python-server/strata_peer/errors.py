"""Error answers (SPEC 2.8): every error is JSON {"error":{"type","message"}}."""

from starlette.responses import Response

from . import jsonvals


class ApiError(Exception):
    """An error answer: HTTP status, error type and a message for a reader."""

    def __init__(self, status, etype, message):
        super().__init__(message)
        self.status = status
        self.etype = etype
        self.message = message

    def body(self):
        return error_body(self.etype, self.message)


def error_body(etype, message):
    return {"error": {"type": etype, "message": message}}


def json_response(value, status=200, headers=None):
    return Response(jsonvals.dumps(value).encode("utf-8"), status_code=status,
                    media_type="application/json", headers=headers)


def error_response(status, etype, message, headers=None):
    return json_response(error_body(etype, message), status, headers)


def bad_request(message):
    return ApiError(400, "invalid_request_error", message)


def not_found():
    return error_response(404, "not_found", "not found")


def method_not_allowed():
    return error_response(405, "method_not_allowed", "method not allowed")
