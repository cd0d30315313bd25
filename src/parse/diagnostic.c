/* Diagnostics (diagnostic.h): what the tool could not do with a file. */
#include "parse/diagnostic.h"

#include <stdlib.h>

void diagnostic_release(struct diagnostic *d)
{
	free(d->file);
	free(d->message);
}
